/*
Name: Vacancies by department
Description: Live vacancies for one department, newest first (?department=1)
Author: WebJobs
Version: 1.0.0
Runtime: 10000
*/
const department = String(params.department || "").trim()
if (!department) return response.json({ error: "department is required" }, 400)

const rows = await db.exec(
  `SELECT VacancyID, Position, Town, Salary, WhenCreated
     FROM Vacancy WHERE DepartmentID = ? AND Status = 'L'
    ORDER BY WhenCreated DESC LIMIT 50`,
  [department]
)
return { success: true, department, count: rows.length, vacancies: rows }
